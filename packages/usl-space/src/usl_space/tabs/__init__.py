"""The app's tabs, one module each: its layout, its wiring and its handlers together (usl_space.app puts them on a
page; usl_space.service holds what they share)."""
