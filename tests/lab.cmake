# laptime lab (kernels/lab/, bench/lab/). Host: the registry, the byte/FLOP models and the CPU
# references (against the models' oracles), and the command line (--list, bad words, the real
# binary without a GPU). GPU (skips without one): every version of every kernel against the
# reference, and the --kernel swap-in in GPT-2 and the max pool.
laptime_test(test_lab_registry test_lab_registry.cpp LIBS laptime_lab_registry laptime_fp8_ref laptime_test_support)
laptime_test(test_lab_cli test_lab_cli.cpp LIBS laptime_cli_gpu GTest::gmock)
target_compile_definitions(test_lab_cli PRIVATE LAPTIME_BINARY="$<TARGET_FILE:laptime>")
add_dependencies(test_lab_cli laptime)
laptime_test(test_lab_kernels test_lab_kernels.cpp LIBS laptime_bench laptime_test_support)
# A learner's own kernel file: the templates compiled with NVRTC for sm_90 and sm_80, the
# signature and compile refusals, the cache, the child process (all without a GPU); on a GPU, the
# templates, the wrong and the faster examples, hangs and faults as rungs, and GPT-2 with a file.
laptime_test(test_lab_try test_lab_try.cpp LIBS laptime_bench laptime_test_support GTest::gmock)
target_compile_definitions(test_lab_try PRIVATE LAPTIME_BINARY="$<TARGET_FILE:laptime>")
add_dependencies(test_lab_try laptime)
