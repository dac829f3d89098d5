package views

import "context"

// sessionAgentText names a session's browser, or says that it named none.
func sessionAgentText(ctx context.Context, agent string) string {
	if agent == "" {
		return T(ctx, "account.unknown_browser")
	}
	return agent
}
