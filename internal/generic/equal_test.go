package generic

import (
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"
)

// EqualOf agrees with reflect.DeepEqual on every type of client-go's scheme: on copies,
// on copies with one leaf changed (strings, numbers, bools, nil against empty slices and
// maps, pointers set or cleared), and on unrelated random objects.
func TestEqualOfAgreesWithDeepEqual(t *testing.T) {
	types := scheme.Scheme.AllKnownTypes()
	if len(types) < 100 {
		t.Fatalf("only %d types in the scheme", len(types))
	}
	rng := rand.New(rand.NewSource(1))
	var compared, differing int
	for gvk, typ := range types {
		equal := EqualOf(typ)
		for round := range 8 {
			fill := randfill.New().NilChance(0.3).NumElements(0, 2).MaxDepth(6).RandSource(rand.NewSource(int64(round)))
			a := reflect.New(typ)
			if !fillRandomly(fill, a.Interface()) {
				continue
			}
			b := reflect.New(typ)
			b.Elem().Set(deepCopy(a.Elem()))
			check := func(what string) {
				t.Helper()
				want := reflect.DeepEqual(a.Interface(), b.Interface())
				if got := equal(a.UnsafePointer(), b.UnsafePointer()); got != want {
					t.Fatalf("%s, %s: EqualOf says %v, reflect.DeepEqual %v", gvk, what, got, want)
				}
				compared++
				if !want {
					differing++
				}
			}
			check("a copy")
			if mutateLeaf(rng, b.Elem()) {
				check("one leaf changed")
			}
			other := reflect.New(typ)
			if fillRandomly(randfill.New().NilChance(0.3).NumElements(0, 2).MaxDepth(6).RandSource(rand.NewSource(int64(round+100))), other.Interface()) {
				b = other
				check("another random object")
			}
		}
	}
	if compared < 1000 || differing < compared/4 {
		t.Fatalf("compared %d pairs, %d of them different: too few to mean anything", compared, differing)
	}
}

// deepCopy copies v with fresh slices, maps and pointers, so that EqualOf cannot take a
// shortcut on shared memory.
func deepCopy(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(deepCopy(v.Elem()))
			out.Set(p)
		}
	case reflect.Slice:
		if !v.IsNil() {
			s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := range v.Len() {
				s.Index(i).Set(deepCopy(v.Index(i)))
			}
			out.Set(s)
		}
	case reflect.Map:
		if !v.IsNil() {
			m := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				m.SetMapIndex(it.Key(), deepCopy(it.Value()))
			}
			out.Set(m)
		}
	case reflect.Struct:
		out.Set(v) // unexported fields (quantities' caches) as they are
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
	default:
		out.Set(v)
	}
	return out
}

// mutateLeaf changes one settable value found by a random walk down v.
func mutateLeaf(rng *rand.Rand, v reflect.Value) bool {
	for depth := 0; depth < 20; depth++ {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || rng.Intn(4) == 0 {
				if v.IsNil() {
					v.Set(reflect.New(v.Type().Elem()))
				} else {
					v.Set(reflect.Zero(v.Type()))
				}
				return true
			}
			v = v.Elem()
		case reflect.Struct:
			var settable []int
			for i := range v.NumField() {
				if v.Field(i).CanSet() {
					settable = append(settable, i)
				}
			}
			if len(settable) == 0 {
				return false
			}
			v = v.Field(settable[rng.Intn(len(settable))])
		case reflect.Slice:
			switch {
			case v.IsNil():
				v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // nil → empty
				return true
			case v.Len() == 0 || rng.Intn(4) == 0:
				v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
				return true
			}
			v = v.Index(rng.Intn(v.Len()))
		case reflect.Map:
			if v.IsNil() {
				v.Set(reflect.MakeMap(v.Type())) // nil → empty
				return true
			}
			key := reflect.New(v.Type().Key()).Elem()
			if key.Kind() != reflect.String {
				return false
			}
			key.SetString("mutated")
			v.SetMapIndex(key, reflect.New(v.Type().Elem()).Elem())
			return true
		case reflect.String:
			if s := v.String(); s != "" && rng.Intn(2) == 0 {
				v.SetString(s[:len(s)-1] + string(rune('a'+(s[len(s)-1]+1-'a')%26))) // same length
			} else {
				v.SetString(s + "x")
			}
			return true
		case reflect.Bool:
			v.SetBool(!v.Bool())
			return true
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(v.Int() ^ 1<<rng.Intn(v.Type().Bits()-1)) // any bit, high ones too
			return true
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(v.Uint() ^ 1<<rng.Intn(v.Type().Bits()))
			return true
		case reflect.Float32, reflect.Float64:
			v.SetFloat(v.Float() + 1)
			return true
		default:
			return false
		}
	}
	return false
}

// Equal agrees with reflect.DeepEqual on unstructured content, including the
// cases where they are easy to get wrong: nil against empty, int64 against float64,
// json.Number, a nested difference.
func TestGenericEqualAgreesWithDeepEqual(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var randomValue func(depth int) any
	randomValue = func(depth int) any {
		switch n := rng.Intn(11); {
		case n == 0 && depth > 0:
			m := map[string]any{}
			for range rng.Intn(3) {
				m[string(rune('a'+rng.Intn(3)))] = randomValue(depth - 1)
			}
			return m
		case n == 1 && depth > 0:
			l := make([]any, rng.Intn(3))
			for i := range l {
				l[i] = randomValue(depth - 1)
			}
			return l
		case n == 2:
			return map[string]any(nil)
		case n == 3:
			return []any(nil)
		case n == 4:
			return int64(rng.Intn(2))
		case n == 5:
			return float64(rng.Intn(2))
		case n == 6:
			return rng.Intn(2) == 0
		case n == 7:
			return string(rune('x' + rng.Intn(2)))
		case n == 8:
			return json.Number("1")
		case n == 9:
			return nil
		}
		return "x"
	}
	var equal, different int
	for range 20000 {
		a, b := randomValue(3), randomValue(3)
		for _, pair := range [][2]any{{a, b}, {a, a}, {map[string]any{"k": a}, map[string]any{"k": b}}, {[]any{a, "z"}, []any{b, "z"}}} {
			want := reflect.DeepEqual(pair[0], pair[1])
			if got := Equal(pair[0], pair[1]); got != want {
				t.Fatalf("Equal(%#v, %#v) = %v, reflect.DeepEqual says %v", pair[0], pair[1], got, want)
			}
			if want {
				equal++
			} else {
				different++
			}
		}
	}
	if equal < 1000 || different < 1000 {
		t.Fatalf("%d equal and %d different pairs: the generator is off", equal, different)
	}
	if nan := math.NaN(); Equal(nan, nan) != reflect.DeepEqual(nan, nan) {
		t.Error("Equal(NaN, NaN) differs from reflect.DeepEqual")
	}
}

func fillRandomly(fill *randfill.Filler, obj any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	fill.Fill(obj)
	return true
}
