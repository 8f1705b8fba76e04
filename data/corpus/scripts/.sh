# TODO a dot-only name has no extension
