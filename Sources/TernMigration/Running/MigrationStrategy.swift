/// How the steps of a store migration are carried out.
///
/// By default (``automatic``) a migration whose steps are all inferred runs in place: SQL inside
/// one transaction for all its steps (`ALTER TABLE` where it can, SQLite's table rebuild
/// otherwise), without loading objects. A plan with a mapping model, a migration to a
/// destination, and an inferred step the in-place planner cannot express (see
/// `docs/Migration.md`) are built beside the store, step by step, and swapped in. Either way an
/// interrupted migration leaves the old store or the new one, never a version in between.
public enum MigrationStrategy: String, Sendable, Hashable, CaseIterable {
    /// In place when every step is inferred and can run in place, else built beside the store.
    case automatic
    /// In place, failing with ``MigrationError/Code/notInferable`` before anything
    /// is written when a step has a mapping model or cannot run in place.
    case inPlace
    /// Every step built beside the store and swapped in, as before in-place steps existed.
    case rebuild
}
