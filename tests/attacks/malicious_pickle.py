# place: end
# Unpickle the student's own evil.pkl (shipped with the submission): only the sandbox is hit.
import pickle
with open("evil.pkl", "rb") as handle:
    pickle.load(handle)
