package web

import (
	"crypto/subtle"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/views"
)

// registerSetup serves the one-time setup address that parley serve prints while no human
// account exists. Until the setup form is built its page says how to create the first
// account from the command line.
func registerSetup(app *fiber.App, db *storage.DB) {
	app.Get("/setup", func(c *fiber.Ctx) error {
		ok, err := setupCodeValid(c, db, c.Query("code"))
		if err != nil {
			return err
		}
		if !ok {
			// The same answer for a wrong code and for a finished setup: a guesser learns
			// nothing, and the address stops existing once it has served its purpose.
			return fiber.ErrNotFound
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		return Render(c, views.SetupPending())
	})
}

// setupCodeValid reports whether code is the setup code and no user exists yet.
func setupCodeValid(c *fiber.Ctx, db *storage.DB, code string) (bool, error) {
	ctx := c.UserContext()
	n, err := db.CountUsers(ctx)
	if err != nil || n > 0 {
		return false, err
	}
	want, err := db.Setting(ctx, storage.SettingSetupCode)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return code != "" && subtle.ConstantTimeCompare([]byte(code), []byte(want)) == 1, nil
}
