import Foundation
import TernCore
import Testing

private struct Item {
    var name: String
    var price: Double
}

private final class Owner {
    var name = ""
    var born: Date?
}

private final class Pet {
    var name = ""
    var age = 0
    var weight: Double?
    var isVaccinated = false
    var owner: Owner?
    var tags: [String] = []
    var items: [Item] = []
}

@Suite struct PredicateFoundationTests {
    @Test func comparisonsAndLogic() throws {
        let typed = #Predicate<Pet> { $0.age >= 2 && ($0.name == "Rex" || !($0.weight == nil)) }
        #expect(try FetchPredicate(typed) == FetchPredicate("age >= 2 AND (name == 'Rex' OR NOT weight == nil)"))
        let alternatives = #Predicate<Pet> { $0.age == 1 || $0.age == 2 || ($0.age == 3 && $0.age == 4) }
        #expect(try FetchPredicate(alternatives) == FetchPredicate("age == 1 OR age == 2 OR (age == 3 AND age == 4)"))
        let limits = #Predicate<Pet> { 3 < $0.age && $0.age <= 9 && $0.weight != 1.5 && $0.age > -1 }
        #expect(try FetchPredicate(limits) == FetchPredicate("3 < age AND age <= 9 AND weight != 1.5 AND age > -1"))
    }

    @Test func stringsBooleansAndOptionalChains() throws {
        let typed = #Predicate<Pet> { $0.name.contains("ex") && $0.name.starts(with: "R") }
        #expect(try FetchPredicate(typed) == FetchPredicate("name CONTAINS 'ex' AND name BEGINSWITH 'R'"))
        let flag = #Predicate<Pet> { $0.isVaccinated }
        #expect(try FetchPredicate(flag) == FetchPredicate("isVaccinated == TRUE"))
        let chain = #Predicate<Pet> { $0.owner?.name == "Ann" }
        #expect(try FetchPredicate(chain) == FetchPredicate("owner.name == 'Ann'"))
        let constant = #Predicate<Pet> { _ in true }
        #expect(try FetchPredicate(constant) == .constant(true))
    }

    @Test func collections() throws {
        let names = ["Rex", "Max"]
        let typed = #Predicate<Pet> { names.contains($0.name) && $0.tags.contains("cute") && $0.items.count > 2 }
        #expect(try FetchPredicate(typed) == FetchPredicate("name IN {'Rex', 'Max'} AND tags CONTAINS 'cute' AND items.@count > 2"))
        let any = #Predicate<Pet> { $0.items.contains { $0.price > 3 } }
        #expect(try FetchPredicate(any) == FetchPredicate("ANY items.price > 3.0"))
        let all = #Predicate<Pet> { $0.items.allSatisfy { $0.name != "" } }
        #expect(try FetchPredicate(all) == FetchPredicate("ALL items.name != ''"))
    }

    @Test func customKeyNamesAndValues() throws {
        let cutoff = Date(timeIntervalSinceReferenceDate: 100)
        let typed = #Predicate<Pet> { $0.owner?.born == cutoff }
        let converted = try FetchPredicate(typed) { keyPath in keyPath == \Owner.born ? "birthDate" : nil }
        #expect(converted == (try FetchPredicate("owner.birthDate == CAST(100, 'NSDate')")))
    }

    @Test func convertedPredicatesEvaluateLikeTheOriginal() throws {
        let typed = #Predicate<Pet> { $0.age >= 2 && $0.name.starts(with: "R") }
        let converted = try FetchPredicate(typed)
        for (name, age) in [("Rex", 3), ("Rex", 1), ("Max", 5)] {
            let pet = Pet()
            pet.name = name
            pet.age = age
            let row: [String: PredicateValue] = ["name": .single(.string(name)), "age": .single(.integer(Int64(age)))]
            #expect(try converted.evaluate(with: row) == typed.evaluate(pet))
        }
    }

    @Test func unsupportedExpressionsThrow() {
        let arithmetic = #Predicate<Pet> { $0.age + 1 > 3 }
        #expect(throws: TernError.self) { try FetchPredicate(arithmetic) }
        let compound = #Predicate<Pet> { $0.items.contains { $0.price > 3 && $0.name == "x" } }
        #expect(throws: TernError.self) { try FetchPredicate(compound) }
        let computed = #Predicate<Pet> { $0.name.isEmpty }
        #expect(throws: TernError.self) { try FetchPredicate(computed) }
    }
}
