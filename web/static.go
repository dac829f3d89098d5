package web

import (
	"io/fs"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
)

// staticMaxAge lets browsers keep the stylesheets and scripts for an hour: short enough
// that a new release shows soon, long enough that pages do not refetch them on every click.
const staticMaxAge = 3600

// registerStatic serves files (the embedded assets) under /static, when there are any.
func registerStatic(app *fiber.App, files fs.FS) {
	if files == nil {
		return
	}
	app.Use("/static", filesystem.New(filesystem.Config{
		Root:   http.FS(files),
		MaxAge: staticMaxAge,
	}))
}
