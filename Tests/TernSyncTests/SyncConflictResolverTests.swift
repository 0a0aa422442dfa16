import Foundation
import TernCore
import TernSync
import TernTestSupport
import Testing

/// Custom conflict resolvers against a real PostgreSQL server.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct SyncConflictResolverTests {
    /// Keeps the smaller servings, adds cooking times, and leaves other properties to the default.
    static let resolver = SyncConflictResolver.laterWriteWins
        .resolving("Recipe", "servings") { conflict in
            guard case .attribute(.integer(let mine)?) = conflict.local,
                case .attribute(.integer(let theirs)?) = conflict.remote
            else { return .local }
            return mine <= theirs ? .local : .remote
        }
        .resolving("Recipe", "cookingTime") { conflict in
            guard case .attribute(.integer(let mine)?) = conflict.local,
                case .attribute(.integer(let theirs)?) = conflict.remote
            else { return .local }
            return .value(.attribute(.integer(mine + theirs)))
        }

    @Test func aResolverDecidesConcurrentWritesPerProperty() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true, resolver: Self.resolver)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false, resolver: Self.resolver)
        try await converge([a, b])
        for (device, servings, minutes, title) in [(a, 5, 10, "Soup by A"), (b, 7, 20, "Soup by B")] {
            try await device.edit { context in
                let soup = try await SyncTestDevice.recipe("tomato-soup", in: context)
                soup[attribute: "servings"] = .integer(Int64(servings))
                soup[attribute: "cookingTime"] = .integer(Int64(minutes))
                soup[attribute: "title"] = .string(title)
            }
        }
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        try await converge([a, b])
        let soup = try await a.recipeValues("tomato-soup")
        #expect(soup["servings"] == .integer(5))  // the resolver kept the smaller, A's earlier write
        #expect(soup["cookingTime"] == .integer(30))  // the resolver's own value
        #expect(soup["title"] == .string("Soup by B"))  // no rule: the later write wins
        // A write made after pulling the other one is no conflict: it simply wins.
        try await b.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "servings"] = .integer(8)
        }
        try await converge([a, b])
        #expect(try await a.recipeValues("tomato-soup")["servings"] == .integer(8))
    }

    @Test func theDefaultResolverLetsTheLaterWriteWin() async throws {
        let resolver = SyncConflictResolver.laterWriteWins
        let conflict = SyncConflict(
            object: UUID(), entity: "Recipe", property: "title", local: .attribute(.string("mine")),
            remote: .attribute(.string("theirs")), remoteSequence: 4)
        #expect(resolver.resolve(conflict) == .local)
        #expect(Self.resolver.resolve(conflict) == .local)
        var servings = conflict
        (servings.property, servings.local, servings.remote) = (
            "servings", .attribute(.integer(9)), .attribute(.integer(2))
        )
        #expect(Self.resolver.resolve(servings) == .remote)
    }
}
