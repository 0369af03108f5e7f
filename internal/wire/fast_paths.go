package wire

import "github.com/kubeevents/kubeevents/internal/envswitch"

// FastPathsEnv is the environment variable that turns the fast paths (see the package
// comment) off: "off" decodes, encodes and diffs every object whole, for a user who
// suspects a wrong diff; "on", or unset, leaves them on. The output is the same either
// way, only slower with them off.
const FastPathsEnv = "KUBEEVENTS_FAST_PATHS"

// FastPathsFromEnv reads FastPathsEnv through getenv (os.Getenv): whether the fast paths
// are on. Any value but on and off (in any case) is an error, rather than a guess.
func FastPathsFromEnv(getenv func(string) string) (bool, error) {
	return envswitch.On(getenv, FastPathsEnv, "decodes, encodes and diffs every object whole")
}
