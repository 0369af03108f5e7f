// Package envswitch reads kubeevents' on/off environment variables: the switches that turn
// an optimisation or a recovery path off, so that a user who suspects it, or a developer
// measuring what it gains, can run without it (KUBEEVENTS_FAST_PATHS, KUBEEVENTS_QUIET_IO,
// the informer's recovery switches). Every such variable reads the same way.
package envswitch

import (
	"fmt"
	"strings"
)

// On reads the switch name through getenv (os.Getenv): "on" (in any case) or unset is on,
// "off" is off. Any other value is an error rather than a guess; it names the variable and
// says, in offDoes, what off does ("decodes, encodes and diffs every object whole").
func On(getenv func(string) string, name, offDoes string) (bool, error) {
	switch value := getenv(name); strings.ToLower(value) {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, fmt.Errorf("%s=%q: want on or off (off %s)", name, value, offDoes)
	}
}
