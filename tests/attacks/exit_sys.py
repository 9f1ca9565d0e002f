# place: middle
import sys
sys.exit(0)
