"""Side-by-side benchmark of taskqueue against PGQueuer, Procrastinate and a raw-SQL ceiling."""
