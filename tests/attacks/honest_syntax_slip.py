# place: before:value_core
# honest: a first try with a syntax error, left in the notebook; the answer cell below defines
# Value correctly.
class Value:
    def __init__(self, data:
        self.data = data
