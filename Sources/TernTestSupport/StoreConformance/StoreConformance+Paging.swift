import Foundation
import TernCore
import Testing

/// Behaviours of paged fetches (``PersistentStore/fetchPage(_:after:size:)``) and of batched
/// iteration through a context.
extension StoreConformance {
    /// Pages of every size give the rows of a plain fetch, in its order: sorts with nils,
    /// predicates (some that SQL cannot express), offsets and limits, subentities.
    func pagingMatchesFetch() async throws {
        let (coordinator, store) = try await makeCoordinator()
        try await insertPagingRows(coordinator)
        let requests: [StoreFetchRequest] = try [
            StoreFetchRequest(entityName: "Person"),
            StoreFetchRequest(entityName: "Person", sortDescriptors: [FetchSort(key: "age", ascending: false)]),
            StoreFetchRequest(
                entityName: "Person", predicate: FetchPredicate("age >= 30"),
                sortDescriptors: [FetchSort(key: "nickname"), FetchSort(key: "name", ascending: false)]),
            StoreFetchRequest(
                entityName: "Person",
                sortDescriptors: [FetchSort(key: "nickname", ascending: false, caseInsensitive: true)]),
            StoreFetchRequest(entityName: "Person", predicate: FetchPredicate("name BEGINSWITH[c] 'b'")),
            StoreFetchRequest(entityName: "Sample", predicate: FetchPredicate("decimal >= 1")),
            StoreFetchRequest(entityName: "Sample", sortDescriptors: [FetchSort(key: "decimal", ascending: false)]),
            StoreFetchRequest(entityName: "Vehicle", sortDescriptors: [FetchSort(key: "wheels")]),
            StoreFetchRequest(
                entityName: "Pet", predicate: FetchPredicate("owner.age < 40"),
                sortDescriptors: [FetchSort(key: "owner.name")]),
        ]
        var windowed = requests[2]
        windowed.offset = 3
        windowed.limit = 7
        var onlyCars = StoreFetchRequest(entityName: "Car")
        onlyCars.includesSubentities = false
        var pastTheEnd = requests[1]
        pastTheEnd.offset = 1000
        for request in requests + [windowed, onlyCars, pastTheEnd] {
            let expected = try await store.fetch(request).map(\.reference)
            for size in [1, 4, 1000] {
                let pages = try await Self.pages(of: request, in: store, size: size)
                #expect(
                    pages.flatMap { $0 } == expected, "\(request.entityName) \(request.sortDescriptors) size \(size)")
                #expect(pages.allSatisfy { !$0.isEmpty && $0.count <= size })
            }
        }
        #expect(try await store.fetch(requests[0]).count == 30)
        #expect(try await store.fetch(windowed).count == 7)
        #expect(try await store.fetch(requests[7]).count == 6)
    }

    /// Rows saved or deleted between two pages are seen as documented: inserted after the
    /// position, seen; before it, not seen; deleted, not seen; nothing twice.
    func pagingSeesChangesBetweenPages() async throws {
        let (coordinator, store) = try await makeCoordinator()
        try await insertPagingRows(coordinator)
        let request = StoreFetchRequest(entityName: "Person", sortDescriptors: [FetchSort(key: "age")])
        let first = try await store.fetchPage(request, after: nil, size: 10)
        #expect(first.rows.count == 10)
        let next = try #require(first.next)
        #expect(next.delivered == 10)
        let all = try await store.fetch(request)
        let doomed = all[20]
        let keys = try await store.newPrimaryKeys(forEntity: "Person", count: 2)
        let early = StoreRow(
            reference: RowReference(entityName: "Person", primaryKey: keys[0]),
            attributes: ["name": .string("Early"), "age": .integer(0)])
        let late = StoreRow(
            reference: RowReference(entityName: "Person", primaryKey: keys[1]),
            attributes: ["name": .string("Late"), "age": .integer(150)])
        _ = try await store.save(StoreChangeSet(inserted: [early, late], deleted: [doomed.reference: doomed.version]))
        var seen = first.rows.map(\.reference)
        var position: StoreFetchPosition? = next
        while let current = position {
            let page = try await store.fetchPage(request, after: current, size: 10)
            seen += page.rows.map(\.reference)
            position = page.next
        }
        #expect(Set(seen).count == seen.count)
        #expect(seen.contains(late.reference))
        #expect(!seen.contains(early.reference))
        #expect(!seen.contains(doomed.reference))
        #expect(seen.last == late.reference)
        #expect(seen.count == 30)
    }

    /// A context's batched iteration hands every object once, in order, in batches of the
    /// requested size, whatever the size.
    func batchedIteration() async throws {
        let (coordinator, _) = try await makeCoordinator()
        try await insertPagingRows(coordinator)
        var request = FetchRequest(
            entityName: "Person", predicate: try FetchPredicate("age < 100"),
            sortDescriptors: [FetchSort(key: "age", ascending: false)])
        request.includesPendingChanges = false
        let expected = try await ObjectContext(coordinator: coordinator).fetchObjectIDs(request)
        #expect(expected.count == 20)
        for size in [1, 6, 20, 500] {
            request.fetchBatchSize = size
            let batched = request
            let (ids, sizes, ages) = try await ObjectContext(coordinator: coordinator).perform { context in
                var ids: [ObjectID] = []
                var sizes: [Int] = []
                var ages: [AttributeValue?] = []
                try await context.forEachBatch(of: batched) { batch in
                    sizes.append(batch.count)
                    ids += batch.map(\.objectID)
                    ages += batch.map { $0[attribute: "age"] }
                }
                return (ids, sizes, ages)
            }
            #expect(ids == expected, "batch size \(size)")
            #expect(sizes.dropLast().allSatisfy { $0 == size } && (sizes.last ?? 0) <= size && (sizes.last ?? 0) > 0)
            #expect(ages.compactMap { $0 } == ages && ages.count == 20)
        }
    }

    /// A batched walk keeps identity: an object kept by `body` (also when `body` throws), looked
    /// up in the context or changed is the one a later fetch gives; objects nobody kept go.
    func batchedIterationKeepsIdentity() async throws {
        let (coordinator, _) = try await makeCoordinator()
        try await insertPagingRows(coordinator)
        var walked = FetchRequest(entityName: "Person")
        walked.fetchBatchSize = 7
        let request = walked
        struct Stop: Error {}
        let findings = try await ObjectContext(coordinator: coordinator).perform { context in
            var kept: [ManagedObject] = []
            var lookedUp: [ObjectID: ObjectIdentifier] = [:]
            var changed: ObjectID?
            var counts: [Int] = []
            var batches = 0
            try await context.forEachBatch(of: request) { batch in
                batches += 1
                switch batches {
                case 1: kept += batch.prefix(2)
                case 2:
                    // Looking an object up files the whole batch: the same instances come back.
                    for object in batch where context.registeredObject(for: object.objectID) === object {
                        lookedUp[object.objectID] = ObjectIdentifier(object)
                    }
                    counts.append(context.registeredObjectCount)
                case 3:
                    batch[1][attribute: "nickname"] = .string("changed")
                    changed = batch[1].objectID
                default: break
                }
            }
            let afterWalk = context.registeredObjectCount
            let again = try await context.fetch(request)
            let byID = Dictionary(uniqueKeysWithValues: again.map { ($0.objectID, $0) })
            let changedObject = try #require(changed.flatMap { byID[$0] })
            return (
                keptSame: kept.allSatisfy { byID[$0.objectID] === $0 },
                lookedUp: lookedUp.count, countInBatch: counts,
                afterWalk: afterWalk, changedValue: changedObject[attribute: "nickname"],
                changedIsUpdated: context.updatedObjectIDs == [changedObject.objectID], total: again.count
            )
        }
        // An object kept by a `body` that throws stays the context's instance of its row.
        let thrownSame = try await ObjectContext(coordinator: coordinator).perform { context in
            var thrown: ManagedObject?
            do {
                try await context.forEachBatch(of: request) { batch in
                    thrown = batch[3]
                    throw Stop()
                }
            } catch is Stop {}
            let object = try #require(thrown)
            let count = context.registeredObjectCount
            let again = try await context.fetch(request)
            return count == 1 && again.contains { $0 === object }
        }
        #expect(thrownSame)
        #expect(findings.keptSame)
        #expect(findings.lookedUp == 7)
        // The two kept objects and the batch being walked.
        #expect(findings.countInBatch == [9])
        // The kept ones and the changed one are left; the others went with their batches.
        #expect(findings.afterWalk == 3)
        #expect(findings.changedValue == .string("changed"))
        #expect(findings.changedIsUpdated)
        #expect(findings.total == 30)
    }

    // MARK: - Non public

    /// 30 people (ages 0 to 145 by 5, every third without a nickname, nicknames repeating in
    /// mixed case), a pet for each of the first ten, 6 samples with decimals, 3 cars and 3 bikes.
    func insertPagingRows(_ coordinator: PersistentStoreCoordinator) async throws {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { context in
            var people: [ManagedObject] = []
            for index in 0..<30 {
                let person = context.insert("Person")
                person[attribute: "name"] = .string("\(letters[(index * 7) % 26])\(letters[index % 26]) Doe")
                person[attribute: "age"] = .integer(Int64((index * 5) % 150))
                if index % 3 != 0 { person[attribute: "nickname"] = .string(index % 2 == 0 ? "ace" : "Ace") }
                people.append(person)
            }
            for index in 0..<10 {
                let pet = context.insert("Pet")
                pet[attribute: "name"] = .string("Pet \(letters[index])")
                pet[toOne: "owner"] = people[index * 3]
            }
            for index in 0..<6 {
                context.insert("Sample")[attribute: "decimal"] = .decimal(Decimal(index % 4) + Decimal(5) / Decimal(10))
                context.insert(index % 2 == 0 ? "Car" : "Bike")[attribute: "wheels"] = .integer(Int64(index % 3))
            }
            try await context.save()
        }
    }

    /// Every page of a request, read until the store says no row follows.
    static func pages(
        of request: StoreFetchRequest, in store: any PersistentStore, size: Int
    ) async throws -> [[RowReference]] {
        var pages: [[RowReference]] = []
        var position: StoreFetchPosition?
        repeat {
            let page = try await store.fetchPage(request, after: position, size: size)
            if !page.rows.isEmpty { pages.append(page.rows.map(\.reference)) }
            position = page.next
            #expect(pages.count <= 1000, "paging does not end")
        } while position != nil && pages.count <= 1000
        return pages
    }
}
