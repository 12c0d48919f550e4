"""Periodic upkeep: expiry purge, keyword statistics, recall-log retention."""
