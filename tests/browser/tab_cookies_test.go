package browser

import (
	"context"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// cookies are the cookies of the page the tab shows.
func (tb *tab) cookies() []*network.Cookie {
	tb.t.Helper()
	var cookies []*network.Cookie
	tb.call(func(ctx context.Context) error {
		res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
		cookies = res.Cookies
		return err
	})
	return cookies
}

// setCookies gives the tab's browser context copies of cookies.
func (tb *tab) setCookies(cookies []*network.Cookie) {
	tb.t.Helper()
	params := make([]*network.CookieParam, len(cookies))
	for i, c := range cookies {
		params[i] = &network.CookieParam{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Secure: c.Secure, HTTPOnly: c.HTTPOnly, SameSite: c.SameSite}
	}
	tb.call(func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, network.SetCookies, network.SetCookiesParams{Cookies: params})
		return err
	})
}
