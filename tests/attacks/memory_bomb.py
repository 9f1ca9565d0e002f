# place: middle
import torch
hog = []
while True:
    hog.append(torch.ones(256 * 1024 * 1024 // 4))
