"""The core: matches, clocks, rooms, identities, ratings, hosted bots, tournaments run; it knows no transport."""
