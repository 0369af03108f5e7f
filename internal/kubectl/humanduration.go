package kubectl

import (
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// appendHumanDuration appends d as k8s.io/apimachinery/pkg/util/duration.HumanDuration
// writes it (kubectl's AGE: "45s", "3m12s", "2d4h"), without allocating: a pod line is
// printed for every change of every pod.
func appendHumanDuration(dst []byte, d time.Duration) []byte {
	num := func(dst []byte, n int, unit byte) []byte {
		return append(strconv.AppendInt(dst, int64(n), 10), unit)
	}
	if seconds := int(d.Seconds()); seconds < -1 {
		return append(dst, "<invalid>"...)
	} else if seconds < 0 {
		return append(dst, "0s"...)
	} else if seconds < 60*2 {
		return num(dst, seconds, 's')
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		dst = num(dst, minutes, 'm')
		if s := int(d/time.Second) % 60; s != 0 {
			dst = num(dst, s, 's')
		}
		return dst
	} else if minutes < 60*3 {
		return num(dst, minutes, 'm')
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		dst = num(dst, hours, 'h')
		if m := int(d/time.Minute) % 60; m != 0 {
			dst = num(dst, m, 'm')
		}
		return dst
	case hours < 48:
		return num(dst, hours, 'h')
	case hours < 24*8:
		dst = num(dst, hours/24, 'd')
		if h := hours % 24; h != 0 {
			dst = num(dst, h, 'h')
		}
		return dst
	case hours < 24*365*2:
		return num(dst, hours/24, 'd')
	case hours < 24*365*8:
		dst = num(dst, hours/24/365, 'y')
		if dy := (hours / 24) % 365; dy != 0 {
			dst = num(dst, dy, 'd')
		}
		return dst
	}
	return num(dst, hours/24/365, 'y')
}

// appendSince appends kubectl's translateTimestampSince(t) at now.
func appendSince(dst []byte, now time.Time, t metav1.Time) []byte {
	if t.IsZero() {
		return append(dst, "<unknown>"...)
	}
	return appendHumanDuration(dst, now.Sub(t.Time))
}
