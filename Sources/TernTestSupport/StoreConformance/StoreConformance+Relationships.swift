public import TernCore
import Testing

/// Behaviours about relationships and delete rules.
extension StoreConformance {
    /// Names of the destinations of a relationship, read in a fresh context.
    func names(
        _ coordinator: PersistentStoreCoordinator, of id: ObjectID, _ relationship: String, key: String = "name"
    ) async throws -> [String] {
        try await ObjectContext(coordinator: coordinator).perform { context in
            let object = try await context.object(with: id)
            return object.objects(for: relationship).compactMap { $0[key] as String? }
        }
    }

    func toOneRelationship() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let (personID, carID) = try await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            let car = context.insert("Car")
            person[toOne: "car"] = car
            #expect(car[toOne: "owner"] === person)
            try await context.save()
            return (person.objectID, car.objectID)
        }
        let owner = try await ObjectContext(coordinator: coordinator).perform { context in
            let car = try await context.object(with: carID)
            let person = try #require(car[toOne: "owner"])
            // Giving the car to someone else clears the first owner's side.
            let other = context.insert("Person")
            other["name"] = "Grace"
            car[toOne: "owner"] = other
            #expect(person[toOne: "car"] == nil)
            try await context.save()
            return person.objectID
        }
        #expect(owner == personID)
        let cars = try await ObjectContext(coordinator: coordinator).perform { context in
            (try await context.object(with: personID))[toOne: "car"]?.objectID
        }
        #expect(cars == nil)
    }

    func toManyRelationship() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let personID = try await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            for name in ["Rex", "Tom"] {
                let pet = context.insert("Pet")
                pet["name"] = name
                pet[toOne: "owner"] = person
            }
            #expect(person.objects(for: "pets").count == 2)
            try await context.save()
            return person.objectID
        }
        #expect(Set(try await names(coordinator, of: personID, "pets")) == ["Rex", "Tom"])
        try await ObjectContext(coordinator: coordinator).perform { context in
            let person = try await context.object(with: personID)
            let rex = try #require(person.objects(for: "pets").first { $0["name"] == "Rex" })
            person.remove(rex, from: "pets")
            #expect(rex[toOne: "owner"] == nil)
            try await context.save()
        }
        #expect(try await names(coordinator, of: personID, "pets") == ["Tom"])
    }

    func orderedRelationship() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let playlistID = try await ObjectContext(coordinator: coordinator).perform { context in
            let playlist = context.insert("Playlist")
            let songs = ["one", "two", "three"].map { title in
                let song = context.insert("Song")
                song["title"] = title
                return song
            }
            for song in songs { playlist.add(song, to: "songs") }
            playlist.insert(songs[2], into: "songs", at: 0)
            try await context.save()
            return playlist.objectID
        }
        #expect(try await names(coordinator, of: playlistID, "songs", key: "title") == ["three", "one", "two"])
        try await ObjectContext(coordinator: coordinator).perform { context in
            let playlist = try await context.object(with: playlistID)
            let songs = playlist.objects(for: "songs")
            playlist.setObjects([songs[1], songs[2], songs[0]], for: "songs")
            try await context.save()
        }
        #expect(try await names(coordinator, of: playlistID, "songs", key: "title") == ["one", "two", "three"])
    }

    func manyToManyRelationship() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let (authorID, bookID) = try await ObjectContext(coordinator: coordinator).perform { context in
            let authors = ["Kernighan", "Ritchie"].map { name in
                let author = context.insert("Author")
                author["name"] = name
                return author
            }
            let books = ["C", "Unix"].map { title in
                let book = context.insert("Book")
                book["title"] = title
                return book
            }
            for author in authors { for book in books { author.add(book, to: "books") } }
            #expect(books[0].objects(for: "authors").count == 2)
            try await context.save()
            return (authors[0].objectID, books[1].objectID)
        }
        #expect(Set(try await names(coordinator, of: authorID, "books", key: "title")) == ["C", "Unix"])
        #expect(Set(try await names(coordinator, of: bookID, "authors")) == ["Kernighan", "Ritchie"])
    }

    func cascadeDeleteRule() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let personID = try await insertPersonWithPets(coordinator)
        try await ObjectContext(coordinator: coordinator).perform { context in
            context.delete(try await context.object(with: personID))
            try await context.save()
        }
        let context = ObjectContext(coordinator: coordinator)
        #expect(try await context.count(for: FetchRequest(entityName: "Pet")) == 0)
        #expect(try await context.count(for: FetchRequest(entityName: "Person")) == 0)
    }

    func nullifyDeleteRule() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let personID = try await insertPersonWithPets(coordinator)
        let deleter = ObjectContext(coordinator: coordinator)
        var events = deleter.changes().makeAsyncIterator()
        try await deleter.perform { context in
            let pets = try await context.fetch(FetchRequest(entityName: "Pet"))
            context.delete(pets[0])
            try await context.save()
        }
        #expect(await events.next()?.updated == [personID])
        #expect(try await names(coordinator, of: personID, "pets").count == 1)
    }

    func denyDeleteRule() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let teamID = try await ObjectContext(coordinator: coordinator).perform { context in
            let team = context.insert("Team")
            let person = context.insert("Person")
            person["name"] = "Ada"
            person[toOne: "team"] = team
            try await context.save()
            return team.objectID
        }
        let error = try await ObjectContext(coordinator: coordinator).perform { context in
            context.delete(try await context.object(with: teamID))
            let error = await #expect(throws: TernError.self) { try await context.save() }
            // Removing the member first lets the team go.
            context.rollback()
            let team = try await context.object(with: teamID)
            for member in team.objects(for: "members") { context.delete(member) }
            context.delete(team)
            try await context.save()
            return error
        }
        #expect(error?.code == .validationFailed)
        #expect(error?.failures.map(\.propertyName) == ["members"])
        #expect(error?.failures.first?.objectID == teamID)
        #expect(try await ObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Team")) == 0)
    }

    func noActionDeleteRule() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let (bookID, publisherID) = try await ObjectContext(coordinator: coordinator).perform { context in
            let book = context.insert("Book")
            let publisher = context.insert("Publisher")
            book[toOne: "publisher"] = publisher
            try await context.save()
            return (book.objectID, publisher.objectID)
        }
        let deleter = ObjectContext(coordinator: coordinator)
        var events = deleter.changes().makeAsyncIterator()
        try await deleter.perform { context in
            context.delete(try await context.object(with: bookID))
            try await context.save()
        }
        // No action: the publisher is neither deleted nor touched by the context.
        let saved = try #require(await events.next())
        #expect(saved.deleted == [bookID])
        #expect(!saved.updated.contains(publisherID))
        #expect(
            try await ObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Publisher")) == 1)
    }

    /// Saves a person named Ada with two pets, Rex and Tom.
    ///
    /// - Parameter coordinator: A coordinator over a store with the conformance model.
    /// - Returns: The person's ID.
    /// - Throws: When the save fails.
    public func insertPersonWithPets(_ coordinator: PersistentStoreCoordinator) async throws -> ObjectID {
        try await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            for name in ["Rex", "Tom"] {
                let pet = context.insert("Pet")
                pet["name"] = name
                person.add(pet, to: "pets")
            }
            try await context.save()
            return person.objectID
        }
    }
}
