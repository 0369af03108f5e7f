package store

import (
	"bytes"
	"strings"
	"testing"
)

// TestChangesDecodeAgainstAnyDictionary: a change decodes to its line whatever its
// dictionary's size: none, under s2's minimum, and over its maximum (s2 keeps the last
// 64 KiB, on both sides).
func TestChangesDecodeAgainstAnyDictionary(t *testing.T) {
	c := newCodec()
	defer c.close()
	line := []byte(`{"type":"MODIFIED","object":{"metadata":{"name":"web-1","resourceVersion":"1042"},"status":{"phase":"Running"}}}`)
	for name, dict := range map[string][]byte{
		"none":  nil,
		"tiny":  []byte(`{"type"`),
		"line":  bytes.Replace(line, []byte("1042"), []byte("1041"), 1),
		"large": append([]byte(strings.Repeat("x", 100<<10)), line...),
	} {
		data := append([]byte(nil), c.encodeChange(line, dict)...)
		got, err := c.decodeChange([]byte("kept:"), data, dict)
		if err != nil || string(got) != "kept:"+string(line) {
			t.Errorf("%s: decoded %q, %v", name, got, err)
		}
		if name == "line" && len(data) > len(line)/4 {
			t.Errorf("a change against a line like it takes %d bytes of %d", len(data), len(line))
		}
	}
	if _, err := c.decodeChange(nil, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, nil); err == nil {
		t.Error("a change that says 34 GB decoded")
	}
}
