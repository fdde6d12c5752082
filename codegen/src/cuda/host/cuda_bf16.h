// Host stand-in for cuda_bf16.h: the prelude converts bfloat16 with integer
// operations of its own and needs nothing from this header.
#pragma once
