package jsonw

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// jsonStringPieces are what strings are built from below: every escape encoding/json
// writes, text it leaves alone, and bytes that are not valid UTF-8.
var jsonStringPieces = []string{
	"a", "Z", " ", "~", "\x7f", `"`, `\`, "<", ">", "&", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f",
	"é", "€", "😀", "\u2028", "\u2029", "\u2027", "\u202a", "\ufffd", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf0\x9f",
	`{"apiVersion":"v1","kind":"Pod"}`, strings.Repeat("x", 40),
}

// AppendJSONString writes every string as encoding/json does (HTML escapes included),
// after whatever dst held.
func TestAppendJSONStringSameAsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(s string) {
		t.Helper()
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONString([]byte("prefix:"), s); !bytes.Equal(got, append([]byte("prefix:"), want...)) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got[len("prefix:"):], want)
		}
	}
	check("")
	for _, piece := range jsonStringPieces {
		check(piece)
	}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(jsonStringPieces[rng.IntN(len(jsonStringPieces))])
		}
		check(b.String())
	}
	for c := range 256 {
		check(string([]byte{byte(c)}))
		check("a" + string([]byte{byte(c)}) + "b")
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, piece := range jsonStringPieces {
		f.Add(piece)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}
