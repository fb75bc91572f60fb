// Origin: llm.c, train_gpt2_fp32.cu (https://github.com/karpathy/llm.c),
// the residual and encoder forward kernels, unchanged apart from kernelc's
// annotations (the KC_ lines and KC_ attributes).
//
// MIT License
//
// Copyright (c) 2024 Andrej Karpathy
//
// Permission is hereby granted, free of charge, to any person obtaining a
// copy of this software and associated documentation files (the
// "Software"), to deal in the Software without restriction, including
// without limitation the rights to use, copy, modify, merge, publish,
// distribute, sublicense, and/or sell copies of the Software, and to permit
// persons to whom the Software is furnished to do so, subject to the
// following conditions:
//
// The above copyright notice and this permission notice shall be included
// in all copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS
// OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
// MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
// NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
// DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
// OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
// USE OR OTHER DEALINGS IN THE SOFTWARE.
#include <kernelc.h>

KC_GRID("N")
KC_BLOCK(256)
KC_ELEMENTWISE
__global__ void residual_forward_kernel(KC_OUT("N") float* out,
                                        KC_IN("N") float* inp1,
                                        KC_IN("N") float* inp2,
                                        KC_DERIVED("inp1.size") int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) {
        out[idx] = __ldcs(&inp1[idx]) + __ldcs(&inp2[idx]);
    }
}

KC_GRID("B * T * C")
KC_BLOCK(256)
__global__ void encoder_forward_kernel2(KC_OUT("B, T, C") float* out,
                               KC_IN("B, T") int* inp, KC_IN("V, C") float* wte,
                               KC_IN("maxT, C") float* wpe,
                               KC_DERIVED("inp.shape[0]") int B,
                               KC_DERIVED("inp.shape[1]") int T,
                               KC_DERIVED("wte.shape[1]") int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int N = B * T * C;

    if (idx < N) {
        int bt = idx / C;
        int b = bt / T;
        int t = bt % T;
        int c = idx % C;

        int ix = inp[b * T + t];

        float* out_btc = out + b * T * C + t * C + c;
        float* wte_ix = wte + ix * C + c;
        float* wpe_tc = wpe + t * C + c;
        *out_btc = *wte_ix + *wpe_tc;
    }
}
