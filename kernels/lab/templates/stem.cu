// One thread a pooled output channel (n, py, px, o): the nine conv pixels of its pooling window
// on CUDA cores (4 x 4 x 16 multiply-adds each), each rounded to bf16 after the ReLU as the
// fused kernels round what they keep; the window clipped to the conv output (Hs - 3 a side).
// The conv output never reaches memory, but a conv pixel is computed for up to four windows.
extern "C" __global__ void stem(scalar_t* out, const scalar_t* in, const scalar_t* weight, const scalar_t* bias, int N,
                                int Hs, int C) {
  const int So = Hs - 3, Po = (So - 1) / 2 + 1;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)N * Po * Po * C) return;
  const int o = int(i % C), px = int(i / C % Po), py = int(i / ((long long)C * Po) % Po);
  const long long n = i / ((long long)C * Po * Po);
  const scalar_t* w = weight + (long long)o * 256;
  const float b = to_float(bias[o]);
  float best = 0.f;  // every window holds a conv pixel, and ReLU >= 0
  for (int y = max(2 * py - 1, 0); y < min(2 * py + 2, So); ++y)
    for (int x = max(2 * px - 1, 0); x < min(2 * px + 2, So); ++x) {
      float acc = 0.f;
      for (int a = 0; a < 4; ++a)
        for (int bb = 0; bb < 4; ++bb) {
          const scalar_t* p = in + ((n * Hs + y + a) * Hs + x + bb) * 16;
          const scalar_t* wk = w + (4 * a + bb) * 16;
          for (int c = 0; c < 16; ++c) acc += to_float(p[c]) * to_float(wk[c]);
        }
      best = fmaxf(best, to_float(to_scalar(fmaxf(acc + b, 0.f))));
    }
  out[i] = to_scalar(best);
}

__device__ LaunchShape stem_launch(int N, int Hs, int C, int sms) {
  const int Po = (Hs - 4) / 2 + 1;
  LaunchShape s;
  s.block = dim3(256);
  s.grid = dim3(ceil_div((long long)N * Po * Po * C, 256));
  s.shared_bytes = 0;
  return s;
}
