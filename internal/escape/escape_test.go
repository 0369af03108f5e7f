package escape

import "testing"

func TestAppend(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"web-1", "web-1"},
		{"evil\x1b[31mred\nnext", `evil\x1b[31mred\nnext`},
		{"tab\there\r\x00\x7f", `tab\there\r\x00\x7f`},
		{"\a\b\f\n\r\t\v\x01\x1f ", `\a\b\f\n\r\t\v\x01\x1f `},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eabc", `bidi \u202eabc`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"ünïcödé 名前 🙂", "ünïcödé 名前 🙂"},
		{"tag \U000e0041", `tag \U000e0041`},
		{`back\slash`, `back\slash`},
	} {
		if got := string(Append([]byte("> "), tc.in)); got != "> "+tc.want {
			t.Errorf("Append(%q) = %q, want %q", tc.in, got, "> "+tc.want)
		}
	}
}
