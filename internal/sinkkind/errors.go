package sinkkind

import (
	"fmt"
	"strconv"
	"strings"
)

// FailedError says one or more sinks stopped on an error while the rest went on. Each
// failure was reported when it happened.
type FailedError struct{ Names []string }

func (e *FailedError) Error() string {
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("sink %s failed (see above)", strings.Join(quoted, ", "))
}

// OpenError says a sink could not be opened at start-up (a file in a directory that
// cannot be written): the run ends before it starts, exit code 4, with this one line.
type OpenError struct {
	Name string
	Err  error
}

func (e *OpenError) Error() string { return fmt.Sprintf("sink %q: %v", e.Name, e.Err) }
func (e *OpenError) Unwrap() error { return e.Err }
