"""Repository truth: the work tree root, CodePlane's state directory, the file universe, reconcile, watcher."""
