# The build policy (models/policy.h) without a GPU: the seeded inputs `laptime bench` draws against
# their numpy twin in tests/e2e/e2e_common.py, which the end-to-end checks feed PyTorch.
laptime_test(test_seeded_inputs test_seeded_inputs.cpp LIBS laptime_test_support)
target_compile_definitions(test_seeded_inputs PRIVATE PYTHON_EXECUTABLE="${Python3_EXECUTABLE}")
