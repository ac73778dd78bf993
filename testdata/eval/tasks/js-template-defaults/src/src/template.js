'use strict';

// render replaces each {{name}} in text with vars[name], or with nothing
// when vars has no such value.
function render(text, vars) {
  return text.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, name) => {
    const value = vars[name];
    return value === undefined || value === null ? '' : String(value);
  });
}

module.exports = { render };
