// Wide enough that `--list-test-names-only` never wraps a name: catch_discover_tests reads that
// listing line by line, and a wrapped name would become two tests that match nothing.
#define CATCH_CONFIG_CONSOLE_WIDTH 300
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
