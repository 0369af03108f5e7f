package suggest

import "testing"

func TestSuggest(t *testing.T) {
	candidates := []string{"name", "format", "on-full", "maxSizeMB", "raw"}
	tests := []struct{ in, want string }{
		{"fromat", "format"},
		{"NAME", "name"},
		{"on_full", "on-full"},
		{"onfull", "on-full"},
		{"maxsizemb", "maxSizeMB"},
		{"rw", "raw"},
		{"a", ""},
		{"colour", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.in, candidates); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
