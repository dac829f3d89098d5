package password

import (
	"errors"
	"strings"
	"testing"
)

func TestHashVerify(t *testing.T) {
	encoded, err := Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(encoded, "$argon2id$v=19$m=65536,t=2,p=1$") {
		t.Fatalf("encoded hash %q does not carry the expected parameters", encoded)
	}
	if strings.Contains(encoded, "correct horse battery") {
		t.Fatal("the encoded hash contains the password")
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{
		{"correct horse battery", true},
		{"correct horse batterY", false},
		{"correct horse battery ", false},
		{"", false},
	} {
		got, err := Verify(encoded, tc.pw)
		if err != nil {
			t.Fatalf("Verify(%q): %v", tc.pw, err)
		}
		if got != tc.want {
			t.Errorf("Verify(%q) = %v, want %v", tc.pw, got, tc.want)
		}
	}
}

func TestHashSaltsEveryHash(t *testing.T) {
	a, err := Hash("same password")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Hash("same password")
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
}

// A hash written with other parameters (an older or newer cost) still verifies: the
// parameters are read from the hash, not from the constants.
func TestVerifyReadsParametersFromTheHash(t *testing.T) {
	salt := []byte("0123456789abcdef")
	p := params{memory: 1024, passes: 1, lanes: 2}
	key := idKey("another password", salt, p, 24)
	encoded := encode(p, salt, key)
	ok, err := Verify(encoded, "another password")
	if err != nil || !ok {
		t.Fatalf("Verify = %v, %v; want true", ok, err)
	}
	ok, err = Verify(encoded, "another passworD")
	if err != nil || ok {
		t.Fatalf("Verify with a wrong password = %v, %v; want false", ok, err)
	}
}

func TestVerifyRejectsMalformed(t *testing.T) {
	good, err := Hash("a good password")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Split(good, "$")
	with := func(i int, v string) string {
		f := append([]string(nil), fields...)
		f[i] = v
		return strings.Join(f, "$")
	}
	for name, encoded := range map[string]string{
		"empty":           "",
		"plain text":      "a good password",
		"bcrypt":          "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy",
		"argon2i":         with(1, "argon2i"),
		"version 16":      with(2, "v=16"),
		"version suffix":  with(2, "v=19x"),
		"params order":    with(3, "t=2,m=65536,p=1"),
		"params trailing": with(3, "m=65536,t=2,p=1,x=1"),
		"leading zero":    with(3, "m=065536,t=2,p=1"),
		"huge memory":     with(3, "m=4194304,t=2,p=1"),
		"many passes":     with(3, "m=65536,t=1000,p=1"),
		"zero lanes":      with(3, "m=65536,t=2,p=0"),
		"salt not base64": with(4, "!!!!"),
		"short salt":      with(4, "YWJj"),
		"hash not base64": with(5, "!!!!"),
		"short hash":      with(5, "YWJj"),
		"extra field":     good + "$x",
	} {
		t.Run(name, func(t *testing.T) {
			ok, err := Verify(encoded, "a good password")
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Verify(%q) = %v, %v; want ErrMalformed", encoded, ok, err)
			}
			if ok {
				t.Fatal("a malformed hash verified")
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		pw string
		ok bool
	}{
		{"", false},
		{"1234567", false},
		{"12345678", true},
		{"äöüßäöüß", true}, // eight characters, sixteen bytes
		{"äöüßäöü", false},
		{strings.Repeat("x", MaxBytes), true},
		{strings.Repeat("x", MaxBytes+1), false},
		{"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", false},
	} {
		err := Check(tc.pw)
		if (err == nil) != tc.ok {
			t.Errorf("Check(%q) = %v, want ok=%v", tc.pw, err, tc.ok)
		}
		if _, herr := Hash(tc.pw); (herr == nil) != tc.ok {
			t.Errorf("Hash(%q) error = %v, want ok=%v", tc.pw, herr, tc.ok)
		}
	}
}

// BenchmarkVerify measures what one login costs the server.
func BenchmarkVerify(b *testing.B) {
	encoded, err := Hash("a benchmark password")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Verify(encoded, "a benchmark password"); err != nil {
			b.Fatal(err)
		}
	}
}
