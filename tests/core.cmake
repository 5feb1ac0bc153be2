# core/ without a GPU: the environment switches' one header against the docs table, and their
# accessors (tests/test_env_switches.cpp).
laptime_test(test_env_switches test_env_switches.cpp LIBS laptime_core)
