import TernCore
import Testing

/// Behaviours about batch operations and the model's rules.
extension StoreConformance {
    func batchValidation() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let context = ObjectContext(coordinator: coordinator)
        let people = FetchRequest(entityName: "Person")
        // Types are always checked.
        let typeError = await #expect(throws: TernError.self) {
            try await context.batchInsert(entityName: "Person", objects: [["age": .string("old")]])
        }
        #expect(typeError?.code == .validationFailed)
        let widthError = await #expect(throws: TernError.self) {
            try await context.batchInsert(entityName: "Person", objects: [["age": .integer(70_000)]])
        }
        #expect(widthError?.code == .validationFailed)
        // With validation, every broken rule of every row is reported and nothing is written.
        let checked = BatchOptions(validatesValues: true)
        let rows: [[String: AttributeValue]] = [["age": .integer(3)], ["name": .string("R2D2"), "age": .integer(200)]]
        let error = await #expect(throws: TernError.self) {
            try await context.batchInsert(entityName: "Person", objects: rows, options: checked)
        }
        #expect(error?.code == .validationFailed)
        #expect(error?.failures.map { "\($0.propertyName ?? "?")" } == ["name", "age", "name"])
        #expect(error?.failures.allSatisfy { $0.entityName == "Person" } == true)
        #expect(try await context.count(for: people) == 0)
        // Without it (the default), the same rows go in, as with Core Data's batch requests.
        #expect(try await context.batchInsert(entityName: "Person", objects: rows).count == 2)
        let ids = try await context.batchInsert(
            entityName: "Person", objects: [["name": .string("Ada")]], options: checked)
        #expect(ids.count == 1)
        // Batch updates: a required attribute cannot be cleared, nor a value break its range.
        let ada = FetchRequest(entityName: "Person", predicate: try FetchPredicate("name == 'Ada'"))
        for values: [String: AttributeValue?] in [["name": nil], ["age": .integer(151)], ["name": .string("Ada!")]] {
            let updateError = await #expect(throws: TernError.self) {
                try await context.batchUpdate(ada, values: values, options: checked)
            }
            #expect(updateError?.failures.map(\.propertyName) == [values.keys.first])
        }
        #expect(try await context.batchUpdate(ada, values: ["age": .integer(36)], options: checked) == ids)
        #expect(try await context.batchUpdate(ada, values: ["age": .integer(151)]) == ids)
        // Uniqueness constraints hold whatever the options.
        let duplicate = await #expect(throws: TernError.self) {
            try await context.batchInsert(
                entityName: "Account", objects: [["email": .string("a@b.c")], ["email": .string("a@b.c")]])
        }
        #expect(duplicate?.code == .constraintConflict)
        #expect(try await context.count(for: FetchRequest(entityName: "Account")) == 0)
    }

    func batchDeleteRules() async throws {
        let rules = BatchOptions(appliesDeleteRules: true)
        // Without delete rules (the default) only the matching rows go.
        let (plain, _) = try await makeCoordinator()
        _ = try await insertPersonWithPets(plain)
        let context = ObjectContext(coordinator: plain)
        #expect(try await context.batchDelete(FetchRequest(entityName: "Person")).count == 1)
        #expect(try await context.count(for: FetchRequest(entityName: "Pet")) == 2)

        let (coordinator, store) = try await makeCoordinator()
        let personID = try await insertPersonWithPets(coordinator)
        let (carID, teamID, bookID, publisherID, authorID) = try await ObjectContext(coordinator: coordinator).perform {
            context in
            let person = try await context.object(with: personID)
            let car = context.insert("Car")
            car[toOne: "owner"] = person
            let team = context.insert("Team")
            team["name"] = "Blue"
            person[toOne: "team"] = team
            let publisher = context.insert("Publisher")
            let book = context.insert("Book")
            book[toOne: "publisher"] = publisher
            let author = context.insert("Author")
            author.add(book, to: "books")
            try await context.save()
            return (car.objectID, team.objectID, book.objectID, publisher.objectID, author.objectID)
        }
        let batch = ObjectContext(coordinator: coordinator)
        // Deny: the team holds a member, so deleting it is refused and nothing changes.
        let denied = await #expect(throws: TernError.self) {
            try await batch.batchDelete(FetchRequest(entityName: "Team"), options: rules)
        }
        #expect(denied?.code == .validationFailed)
        #expect(denied?.failures.map(\.propertyName) == ["members"])
        #expect(try await batch.count(for: FetchRequest(entityName: "Team")) == 1)
        // Cascade to the pets; nullify the car's owner and the team's members.
        let deleted = try await batch.batchDelete(FetchRequest(entityName: "Person"), options: rules)
        #expect(deleted.count == 3)
        #expect(Set(deleted.map(\.entityName)) == ["Person", "Pet"])
        #expect(try await batch.count(for: FetchRequest(entityName: "Pet")) == 0)
        let (owner, members) = try await ObjectContext(coordinator: coordinator).perform { context in
            let car = try await context.object(with: carID)
            let team = try await context.object(with: teamID)
            return (car.objectIDs(for: "owner"), team.objectIDs(for: "members"))
        }
        #expect(owner.isEmpty)
        #expect(members.isEmpty)
        // With no member left, the team may go.
        #expect(try await batch.batchDelete(FetchRequest(entityName: "Team"), options: rules) == [teamID])
        // Nullify through a many-to-many; no action leaves the publisher's row alone.
        let publisherVersion = try await store.rows(for: [try #require(publisherID.rowReference)]).first?.version
        #expect(try await batch.batchDelete(FetchRequest(entityName: "Author"), options: rules) == [authorID])
        let authors = try await ObjectContext(coordinator: coordinator).perform { context in
            try await context.object(with: bookID).objectIDs(for: "authors")
        }
        #expect(authors.isEmpty)
        #expect(try await batch.batchDelete(FetchRequest(entityName: "Book"), options: rules) == [bookID])
        #expect(try await store.rows(for: [try #require(publisherID.rowReference)]).first?.version == publisherVersion)
    }
}
