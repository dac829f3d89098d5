package locale

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// messages reads a message file as its ids and, for plural messages, their forms.
func messages(t *testing.T, lang string) map[string][]string {
	t.Helper()
	var raw map[string]any
	if _, err := toml.DecodeFile("active."+lang+".toml", &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for id, v := range raw {
		var forms []string
		if m, ok := v.(map[string]any); ok {
			for form := range m {
				forms = append(forms, form)
			}
			sort.Strings(forms)
		}
		out[id] = forms
	}
	return out
}

// Both languages name the same messages, each plural message with the forms one and other
// (the CLDR forms English and German use).
func TestLanguagesMatch(t *testing.T) {
	en, de := messages(t, "en"), messages(t, "de")
	for id, forms := range en {
		deForms, ok := de[id]
		if !ok {
			t.Errorf("%s is in English but not in German", id)
			continue
		}
		if strings.Join(forms, ",") != strings.Join(deForms, ",") {
			t.Errorf("%s has the forms %v in English and %v in German", id, forms, deForms)
		}
		if len(forms) > 0 && strings.Join(forms, ",") != "one,other" {
			t.Errorf("%s has the plural forms %v, want one and other", id, forms)
		}
	}
	for id := range de {
		if _, ok := en[id]; !ok {
			t.Errorf("%s is in German but not in English", id)
		}
	}
}

// Every message id the pages name literally exists, and every id built from a protocol
// word (state., kind., reason. …) is checked by the tests of the pages that render it.
func TestEveryUsedMessageExists(t *testing.T) {
	en := messages(t, "en")
	// Any string literal that looks like a message id of a group the files have (nav.…,
	// state.…), wherever it stands: in T(ctx, "…"), or passed on to a component.
	groups := map[string]bool{}
	for id := range en {
		group, _, _ := strings.Cut(id, ".")
		groups[group] = true
	}
	used := regexp.MustCompile(`"([a-z]+\.[a-z_.]+)"`)
	for _, dir := range []string{"../views", "../web"} {
		names, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, name := range names {
			if !strings.HasSuffix(name, ".templ") && !(strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_templ.go")) {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range used.FindAllStringSubmatch(string(src), -1) {
				group, _, _ := strings.Cut(m[1], ".")
				if !groups[group] {
					continue // no message id at all
				}
				if strings.HasSuffix(m[1], ".") || strings.HasSuffix(m[1], "_") {
					// A prefix completed at run time ("state." + state, "identity.kind_" +
					// kind): some message must complete it; the pages' tests render each.
					if !hasPrefix(en, m[1]) {
						t.Errorf("%s completes the prefix %q, which no message of active.en.toml has", name, m[1])
					}
					continue
				}
				if _, ok := en[m[1]]; !ok {
					t.Errorf("%s names the message %q, which active.en.toml lacks", name, m[1])
				}
			}
		}
	}
}

// hasPrefix reports whether some message id starts with prefix.
func hasPrefix(messages map[string][]string, prefix string) bool {
	for id := range messages {
		if strings.HasPrefix(id, prefix) {
			return true
		}
	}
	return false
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		candidates []string
		want       string
	}{
		{nil, "en"},
		{[]string{"", "", "de-DE,de;q=0.9,en;q=0.8"}, "de"},
		{[]string{"en", "de", "de"}, "en"},
		{[]string{"", "de", "en"}, "de"},
		{[]string{"fr-FR,fr;q=0.9"}, "en"},
		{[]string{"xx;;bad", "de-AT"}, "de"},
		{[]string{"fr", "de"}, "de"},
	} {
		if got := Match(tc.candidates...); got != tc.want {
			t.Errorf("Match(%q) = %q, want %q", tc.candidates, got, tc.want)
		}
	}
}

func TestTranslate(t *testing.T) {
	de, en := For("de"), For("en")
	if got := de.T("label.lock", "Label", "Moderation"); got != "KI · Moderation" {
		t.Errorf("German lock label = %q", got)
	}
	if got := en.T("label.lock", "Label", "Moderation"); got != "AI · Moderation" {
		t.Errorf("English lock label = %q", got)
	}
	if got := For("fr").Lang(); got != "en" {
		t.Errorf("For(fr) speaks %q, want the default en", got)
	}
	if got := en.T("no.such.message"); got != "no.such.message" {
		t.Errorf("a missing message reads %q, want its id", got)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		tr   *Translator
		ago  time.Duration
		want string
	}{
		{en, 10 * time.Second, "just now"},
		{de, 10 * time.Second, "gerade eben"},
		{en, time.Minute, "1 minute ago"},
		{en, 3 * time.Minute, "3 minutes ago"},
		{de, 3 * time.Minute, "vor 3 Minuten"},
		{de, time.Minute, "vor 1 Minute"},
		{en, 2 * time.Hour, "2 hours ago"},
		{de, 25 * time.Hour, "vor 1 Tag"},
		{de, 3 * 24 * time.Hour, "vor 3 Tagen"},
		{en, 90 * 24 * time.Hour, "2 Sep 2026, 12:00 UTC"},
		{de, 90 * 24 * time.Hour, "02.09.2026, 12:00 UTC"},
	} {
		if got := tc.tr.Ago(now.Add(-tc.ago), now); got != tc.want {
			t.Errorf("%s Ago(%s) = %q, want %q", tc.tr.Lang(), tc.ago, got, tc.want)
		}
	}
}
