# place: middle
import os
os._exit(0)
