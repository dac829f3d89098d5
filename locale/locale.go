// Package locale holds everything a person reads in the pages, in English and German, as
// go-i18n message files (active.en.toml, active.de.toml), and picks the reader's language.
// The files are loaded once at start; a Translator is safe for concurrent use.
package locale

import (
	"embed"
	"fmt"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

//go:embed active.*.toml
var files embed.FS

// Supported are the languages the pages speak, the default first.
var Supported = []string{"en", "de"}

// Default is the language of a reader who names none the pages speak.
const Default = "en"

var (
	bundle      = load()
	matcher     = language.NewMatcher([]language.Tag{language.English, language.German})
	translators = map[string]*Translator{}
)

func load() *i18n.Bundle {
	b := i18n.NewBundle(language.English)
	b.RegisterUnmarshalFunc("toml", toml.Unmarshal)
	for _, lang := range Supported {
		if _, err := b.LoadMessageFileFS(files, "active."+lang+".toml"); err != nil {
			panic(fmt.Sprintf("locale: %v", err)) // the files are embedded: a broken one is a bug
		}
	}
	for _, lang := range Supported {
		translators[lang] = &Translator{lang: lang, l: i18n.NewLocalizer(b, lang)}
	}
	return b
}

// Match picks the language for a reader from what they asked for, most important first: a
// ?lang= choice, the choice kept in their session, their Accept-Language header. An empty or
// unknown candidate is passed over; with nothing usable the answer is Default.
func Match(candidates ...string) string {
	for _, c := range candidates {
		if c == "" {
			continue
		}
		tags, _, err := language.ParseAcceptLanguage(c)
		if err != nil || len(tags) == 0 {
			continue
		}
		if _, index, conf := matcher.Match(tags...); conf != language.No {
			return Supported[index]
		}
	}
	return Default
}

// Is reports whether lang is one of the supported language codes exactly.
func Is(lang string) bool {
	for _, s := range Supported {
		if s == lang {
			return true
		}
	}
	return false
}

// Translator speaks one language.
type Translator struct {
	lang string
	l    *i18n.Localizer
}

// For is the translator of lang, Default's when lang is not supported.
func For(lang string) *Translator {
	if t, ok := translators[lang]; ok {
		return t
	}
	return translators[Default]
}

// Lang is the translator's language code, for <html lang>.
func (t *Translator) Lang() string { return t.lang }

// T is the message id in the translator's language, its {{.Name}} fields filled from data
// (pairs of name and value). A missing message shows its id, which the tests forbid.
func (t *Translator) T(id string, data ...any) string {
	return t.localize(&i18n.LocalizeConfig{MessageID: id, TemplateData: pairs(data)})
}

// N is the message id in the plural form for count; {{.Count}} is count.
func (t *Translator) N(id string, count int, data ...any) string {
	d := pairs(data)
	d["Count"] = count
	return t.localize(&i18n.LocalizeConfig{MessageID: id, PluralCount: count, TemplateData: d})
}

func (t *Translator) localize(c *i18n.LocalizeConfig) string {
	s, err := t.l.Localize(c)
	if err != nil {
		return c.MessageID
	}
	return s
}

func pairs(data []any) map[string]any {
	m := make(map[string]any, len(data)/2+1)
	for i := 0; i+1 < len(data); i += 2 {
		m[fmt.Sprint(data[i])] = data[i+1]
	}
	return m
}

// Ago says how long before now then was, in words: "3 minutes ago", "vor 3 Minuten".
func (t *Translator) Ago(then, now time.Time) string {
	d := now.Sub(then)
	switch {
	case d < time.Minute:
		return t.T("time.just_now")
	case d < time.Hour:
		return t.N("time.minutes_ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return t.N("time.hours_ago", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return t.N("time.days_ago", int(d/(24*time.Hour)))
	default:
		return t.Date(then)
	}
}

// Day is a calendar day in the translator's short form, in UTC: "2 Dec", "2.12.".
func (t *Translator) Day(at time.Time) string {
	at = at.UTC()
	if t.lang == "de" {
		return at.Format("2.1.")
	}
	return at.Format("2 Jan")
}

// Month is a calendar month, in UTC: "Dec 2026", "12/2026".
func (t *Translator) Month(at time.Time) string {
	at = at.UTC()
	if t.lang == "de" {
		return at.Format("1/2006")
	}
	return at.Format("Jan 2006")
}

// Date is a calendar date and time in the translator's customary form, in UTC.
func (t *Translator) Date(at time.Time) string {
	at = at.UTC()
	if t.lang == "de" {
		return at.Format("02.01.2006, 15:04") + " UTC"
	}
	return at.Format("2 Jan 2006, 15:04") + " UTC"
}
