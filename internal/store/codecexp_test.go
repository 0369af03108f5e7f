package store

import (
	"bufio"
	"os"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/tidwall/gjson"
)

func TestCodecExperiment(t *testing.T) {
	f, err := os.Open("/tmp/bench-store/churn.jsonl")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var lines [][]byte
	for sc.Scan() && len(lines) < 20000 {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	keyOf := func(l []byte) string { return gjson.GetBytes(l, "object.metadata.uid").String() }
	keys := make([]string, len(lines))
	for i, l := range lines {
		keys[i] = keyOf(l)
	}
	c := newCodec()
	run := func(name string, two bool, enc func(line, dict []byte) int) {
		prev := map[string][2][]byte{}
		total, n := 0, 0
		var dict []byte
		t0 := time.Now()
		for i, l := range lines {
			p, ok := prev[keys[i]]
			if ok {
				dict = dict[:0]
				if two {
					dict = append(dict, p[0]...)
				}
				dict = append(dict, p[1]...)
				total += enc(l, dict)
				n++
			}
			prev[keys[i]] = [2][]byte{p[1], l}
		}
		el := time.Since(t0)
		t.Logf("%s two=%v: %d changes, %d bytes avg, %.1f µs each", name, two, n, total/max(n, 1), float64(el.Microseconds())/float64(max(n, 1)))
	}
	for _, two := range []bool{true, false} {
		run("none", two, func(line, dict []byte) int { return 0 })
		run("zstd", two, func(line, dict []byte) int { return len(c.encode(line, dict)) })
		var dst []byte
		run("s2", two, func(line, dict []byte) int {
			d := s2.MakeDict(dict, nil)
			dst = d.Encode(dst[:cap(dst)], line)
			return len(dst)
		})
	}
}
