package jq

import (
	"io"
	"strings"
)

// WriteProgram prints a jq program as `kubeevents on NAME` and `kubeevents format NAME`
// show it, ending with a newline.
func WriteProgram(w io.Writer, program string) error {
	if !strings.HasSuffix(program, "\n") {
		program += "\n"
	}
	_, err := io.WriteString(w, program)
	return err
}

// FromFile marks, in a listing, what the config file defines rather than kubeevents
// ships.
func FromFile(shipped bool) string {
	if shipped {
		return ""
	}
	return " (config file)"
}
