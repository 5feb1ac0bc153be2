# CUTLASS's sm_90a GEMMs (layers/cutlass/): one GPU test per kernel of the build against the CPU
# reference, through the Gemm plan the layers use (skips without a GPU or off compute capability 9.0).
laptime_test(test_cutlass_gemm test_cutlass_gemm.cpp LIBS laptime_fp8_ref laptime_test_support)
# The tuner's launch charging (GemmTuner::charge: Graph or Eager), GPU only.
laptime_test(test_gemm_tuner test_gemm_tuner.cpp LIBS laptime_test_support)
