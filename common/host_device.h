#pragma once

// Marks functions that both host code and CUDA kernels call.
#if defined(__CUDACC__)
#define GPUREDUCE_HOST_DEVICE __host__ __device__
#else
#define GPUREDUCE_HOST_DEVICE
#endif
