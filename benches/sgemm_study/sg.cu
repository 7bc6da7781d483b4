// Hand-written CUDA C SGEMM variants (the scheme of examples/programs/sgemm.rs, knobs as template
// parameters) that tell which change is worth making in spoc's kernel: benches/sgemm_study/study.py.
// BM x BN block tile, BK deep, TM x TN per thread; VG: 16-byte global loads (A stored transposed
// into shared memory by four 4-byte stores); CHECK: bounds checks; MB: min blocks per SM.
template <int BM, int BN, int BK, int TM, int TN, int VG, int CHECK, int MB>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), MB)
sg(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, unsigned n) {
  constexpr int NT = (BM / TM) * (BN / TN);
  constexpr int AV = (BM * BK / 4 + NT - 1) / NT;
  constexpr int BV = (BK * BN / 4 + NT - 1) / NT;
  __shared__ float4 As[2][BK][BM / 4];
  __shared__ float4 Bs[2][BK][BN / 4];
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const unsigned row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[m][j] = 0.f;
  float4 ga[AV], gb[BV];
  const unsigned slices = (n + BK - 1) / BK;
  for (unsigned s = 0; s <= slices; ++s) {
    if (s < slices) {
      const unsigned k0 = s * BK;
#pragma unroll
      for (int l = 0; l < AV; ++l) {
        int e = l * NT + tid;
        if (VG) {
          unsigned r = row0 + e / (BK / 4), k = k0 + (e % (BK / 4)) * 4;
          bool ok = e < BM * BK / 4 && (!CHECK || (r < n && k < n));
          ga[l] = ok ? *reinterpret_cast<const float4*>(&A[r * n + k]) : make_float4(0, 0, 0, 0);
        } else {
          unsigned r = row0 + (e / BK) * 4, q = k0 + e % BK;
          float v[4];
#pragma unroll
          for (int m = 0; m < 4; ++m)
            v[m] = (e < BM * BK / 4 && (!CHECK || (r + m < n && q < n))) ? A[(r + m) * n + q] : 0.f;
          ga[l] = make_float4(v[0], v[1], v[2], v[3]);
        }
      }
#pragma unroll
      for (int l = 0; l < BV; ++l) {
        int e = l * NT + tid;
        unsigned q = k0 + e / (BN / 4), col = col0 + (e % (BN / 4)) * 4;
        if (VG) {
          bool ok = e < BK * BN / 4 && (!CHECK || (q < n && col < n));
          gb[l] = ok ? *reinterpret_cast<const float4*>(&B[q * n + col]) : make_float4(0, 0, 0, 0);
        } else {
          float v[4];
#pragma unroll
          for (int j = 0; j < 4; ++j)
            v[j] = (e < BK * BN / 4 && (!CHECK || (q < n && col + j < n))) ? B[q * n + col + j] : 0.f;
          gb[l] = make_float4(v[0], v[1], v[2], v[3]);
        }
      }
    }
    if (s > 0) {
      const int cur = (s - 1) & 1;
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        float ra[TM], rb[TN];
#pragma unroll
        for (int v = 0; v < TM / 4; ++v) {
          float4 q = As[cur][k][ty * (TM / 4) + v];
          ra[4 * v] = q.x; ra[4 * v + 1] = q.y; ra[4 * v + 2] = q.z; ra[4 * v + 3] = q.w;
        }
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
          float4 q = Bs[cur][k][g * (BN / TN) + tx];
          rb[4 * g] = q.x; rb[4 * g + 1] = q.y; rb[4 * g + 2] = q.z; rb[4 * g + 3] = q.w;
        }
#pragma unroll
        for (int m = 0; m < TM; ++m)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[m][j] = fmaf(ra[m], rb[j], acc[m][j]);
      }
    }
    if (s < slices) {
      const int buf = s & 1;
#pragma unroll
      for (int l = 0; l < AV; ++l) {
        int e = l * NT + tid;
        if (e < BM * BK / 4) {
          if (VG) {
            float* as = reinterpret_cast<float*>(&As[buf][0][0]);
            int kk = (e % (BK / 4)) * 4, rr = e / (BK / 4);
            as[(kk + 0) * BM + rr] = ga[l].x;
            as[(kk + 1) * BM + rr] = ga[l].y;
            as[(kk + 2) * BM + rr] = ga[l].z;
            as[(kk + 3) * BM + rr] = ga[l].w;
          } else {
            As[buf][e % BK][e / BK] = ga[l];
          }
        }
      }
#pragma unroll
      for (int l = 0; l < BV; ++l) {
        int e = l * NT + tid;
        if (e < BK * BN / 4) Bs[buf][e / (BN / 4)][e % (BN / 4)] = gb[l];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m) {
    unsigned r = row0 + ty * TM + m;
#pragma unroll
    for (int g = 0; g < TN / 4; ++g) {
      unsigned col = col0 + g * (BN / (TN / 4)) + tx * 4;
      if (VG) {
        if (!CHECK || (r < n && col < n))
          *reinterpret_cast<float4*>(&C[r * n + col]) =
              make_float4(acc[m][4 * g], acc[m][4 * g + 1], acc[m][4 * g + 2], acc[m][4 * g + 3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (!CHECK || (r < n && col + j < n)) C[r * n + col + j] = acc[m][4 * g + j];
      }
    }
  }
}
