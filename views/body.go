package views

import (
	"regexp"
	"strings"
)

// A message body is text: the page escapes it (templ does), keeps its line breaks (CSS
// white-space), and makes its http(s) URLs links. It never becomes HTML.

// segment is a piece of a body: plain text, or a URL to link.
type segment struct {
	Text string
	URL  bool
}

// urlPattern finds http and https URLs up to white space or a character that cannot end one.
var urlPattern = regexp.MustCompile(`https?://[^\s<>"]+`)

// trailing are characters that end a sentence more often than a URL: "see https://x.org."
const trailing = ".,;:!?)]}'"

// segments splits body into text and URLs.
func segments(body string) []segment {
	var out []segment
	rest := 0
	for _, loc := range urlPattern.FindAllStringIndex(body, -1) {
		start, end := loc[0], loc[1]
		u := strings.TrimRight(body[start:end], trailing)
		// A closing parenthesis that has its opening one inside the URL belongs to it
		// (https://en.wikipedia.org/wiki/Go_(game)).
		for strings.Count(u, "(") > strings.Count(u, ")") && len(u) < end-start && body[start+len(u)] == ')' {
			u += ")"
		}
		end = start + len(u)
		if u == "http://" || u == "https://" {
			continue
		}
		if start > rest {
			out = append(out, segment{Text: body[rest:start]})
		}
		out = append(out, segment{Text: u, URL: true})
		rest = end
	}
	if rest < len(body) {
		out = append(out, segment{Text: body[rest:]})
	}
	return out
}
