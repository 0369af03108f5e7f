package envswitch

import "testing"

func TestOn(t *testing.T) {
	for value, want := range map[string]bool{"": true, "on": true, "ON": true, "off": false, "Off": false} {
		got, err := On(func(string) string { return value }, "KUBEEVENTS_X", "does less")
		if err != nil || got != want {
			t.Errorf("On(%q) = %v, %v; want %v", value, got, err, want)
		}
	}
	_, err := On(func(string) string { return "no" }, "KUBEEVENTS_X", "does less")
	if want := `KUBEEVENTS_X="no": want on or off (off does less)`; err == nil || err.Error() != want {
		t.Errorf("On(\"no\") = %v; want the error %q", err, want)
	}
}
