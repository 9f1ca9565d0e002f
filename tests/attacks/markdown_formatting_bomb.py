# place: end
# Not code: formatting_bomb_cell() below builds a markdown cell of 15 KiB (under the 16 KiB a
# cell that the host renders): 300 distinct open formatting tags, then thousands of <p>.
# The HTML parser behind bleach re-opens every open formatting element at each new block,
# so the host spent 23-112 s and wrote 16-60 MB of HTML into the autograded notebook.
def formatting_bomb_cell(tags: int = 300, blocks: int = 2600) -> str:
    return "".join(f'<i title="{n}">' for n in range(tags)) + "<p>x" * blocks
