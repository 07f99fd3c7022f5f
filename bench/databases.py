"""The benchmarks' own PostgreSQL databases, created on first use."""


def ensure_database(url):
    """Create the PostgreSQL database of `url` if it does not exist yet."""
    import psycopg

    base, name = url.replace("postgresql+psycopg://", "postgresql://").rsplit("/", 1)
    name = name.split("?", 1)[0]
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        if (
            connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            is None
        ):
            connection.execute(f'CREATE DATABASE "{name}"')
