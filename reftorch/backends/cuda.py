"""CUDA's switches (TF32 matmuls, ...): settable, change nothing; CUDA is not built in."""


class _MatmulSettings:
    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _MatmulSettings()


def is_built() -> bool:
    return False
