// One thread a row, three walks along it: the mean, the variance around it (two passes:
// E[x^2] - mean^2 cancels when the mean is far above the spread), then the output. The sums are
// double: one thread's float sum over a long row far from zero loses about the fp32 bound.
// Slow by design: neighbouring threads read addresses a row apart, so no load coalesces.
extern "C" __global__ void layernorm(scalar_t* out, const scalar_t* in, const scalar_t* weight, const scalar_t* bias,
                                     int rows, int C, float eps) {
  const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const scalar_t* x = in + row * C;
  scalar_t* y = out + row * C;
  double sum = 0;
  for (int c = 0; c < C; ++c) sum += to_float(x[c]);
  const float mean = float(sum / C);
  double sq = 0;
  for (int c = 0; c < C; ++c) {
    const float d = to_float(x[c]) - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(float(sq / C) + eps);
  for (int c = 0; c < C; ++c)
    y[c] = to_scalar((to_float(x[c]) - mean) * rstd * to_float(weight[c]) + to_float(bias[c]));
}

__device__ LaunchShape layernorm_launch(int rows, int C, int sms) {
  LaunchShape s;
  s.block = dim3(256);
  s.grid = dim3(ceil_div(rows, 256));
  s.shared_bytes = 0;
  return s;
}
