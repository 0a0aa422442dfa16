// The Xcode and Core Data file formats: model XML, keyed archives, model caches.
