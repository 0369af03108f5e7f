package jq

import (
	"bytes"
	"testing"
)

func TestWriteProgram(t *testing.T) {
	for program, want := range map[string]string{".a": ".a\n", ".a\n": ".a\n", "# c\n.b | .c": "# c\n.b | .c\n"} {
		var b bytes.Buffer
		if err := WriteProgram(&b, program); err != nil || b.String() != want {
			t.Errorf("WriteProgram(%q) = %q, %v; want %q", program, b.String(), err, want)
		}
	}
	if FromFile(true) != "" || FromFile(false) != " (config file)" {
		t.Errorf("FromFile: %q, %q", FromFile(true), FromFile(false))
	}
}
