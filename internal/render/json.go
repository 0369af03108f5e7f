package render

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/kubeevents/kubeevents/internal/informer"
)

// AppendEnvelope appends ev as one compact JSON object, without a trailing newline:
//
//	{"type":"ADDED","time":"<RFC 3339, UTC>","seq":42,"resource":{"group":"","version":"v1","resource":"pods"},"object":{...},"finalStateUnknown":true}
//
// seq is left out for SYNC events (which have none) and finalStateUnknown unless true.
// The object is copied from ev.ObjectJSON, so it is encoded once however many sinks
// write it. The envelope always ends in '}': a caller that adds fields (diff, old) can
// drop that byte, append ',"diff":…' and close the object again. On error dst is
// returned unchanged.
func AppendEnvelope(dst []byte, ev *informer.Event) ([]byte, error) {
	object, err := ev.ObjectJSON()
	if err != nil {
		return dst, fmt.Errorf("encoding %s %q as JSON: %w", ev.Kind, ev.Key(), err)
	}
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, string(ev.Type))
	dst = append(dst, `,"time":"`...)
	dst = ev.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if ev.Seq != 0 {
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendUint(dst, ev.Seq, 10)
	}
	dst = append(dst, `,"resource":{"group":`...)
	dst = appendJSONString(dst, ev.Resource.Group)
	dst = append(dst, `,"version":`...)
	dst = appendJSONString(dst, ev.Resource.Version)
	dst = append(dst, `,"resource":`...)
	dst = appendJSONString(dst, ev.Resource.Resource)
	dst = append(dst, `},"object":`...)
	dst = append(dst, object...)
	if ev.FinalStateUnknown {
		dst = append(dst, `,"finalStateUnknown":true`...)
	}
	return append(dst, '}'), nil
}

// appendJSONString appends s as a JSON string. The envelope's strings are API
// identifiers that never need escaping, so only the rare odd one pays for encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			quoted, _ := json.Marshal(s) // a string always encodes
			return append(dst, quoted...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
