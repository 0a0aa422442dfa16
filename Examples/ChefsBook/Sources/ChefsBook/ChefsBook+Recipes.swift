extension ChefsBook {
    /// A recipe as version 1 of the app kept it: everything as text.
    public struct LegacyRecipe: Sendable, Hashable {
        /// The recipe's name.
        public var name: String
        /// How many people it serves.
        public var servings: Int64
        /// Preparation time as typed, for example "15 mins".
        public var preparationTime: String
        /// Cooking time as typed, for example "1 hr 5 mins".
        public var cookingTime: String
        /// One ingredient per line, "name: quantity".
        public var ingredients: String
        /// One step per line.
        public var method: String
    }

    /// A recipe of the starter data shipped with version 4.
    public struct StarterRecipe: Sendable, Hashable {
        /// The stable identifier that makes seeding idempotent.
        public var uid: String
        /// The recipe's title.
        public var title: String
        /// How many people it serves.
        public var servings: Int64
        /// Preparation time in minutes.
        public var preparationTime: Int64
        /// Cooking time in minutes.
        public var cookingTime: Int64
        /// Ingredients as (name, quantity).
        public var ingredients: [Ingredient]
        /// The steps, in order.
        public var steps: [String]

        /// One ingredient of a starter recipe.
        public struct Ingredient: Sendable, Hashable {
            /// The ingredient's name.
            public var name: String
            /// How much of it.
            public var quantity: String
        }
    }

    /// The recipes a user typed into version 1 of the app.
    public static let legacyRecipes: [LegacyRecipe] = [
        LegacyRecipe(
            name: "Tomato Soup", servings: 4, preparationTime: "15 mins", cookingTime: "30 mins",
            ingredients: "tomatoes: 1 kg\nonion: 1\nvegetable stock: 500 ml\nbutter: 20 g",
            method:
                "Chop the onion and the tomatoes.\nSoften the onion in the butter.\nAdd the tomatoes and the stock.\nSimmer for 25 minutes, then blend."
        ),
        LegacyRecipe(
            name: "Pancakes", servings: 2, preparationTime: "10 mins", cookingTime: "15 mins",
            ingredients: "flour: 125 g\nmilk: 250 ml\negg: 1\nsalt: a pinch",
            method: "Whisk the flour, egg and salt.\nAdd the milk little by little.\nCook thin pancakes in a hot pan."),
        LegacyRecipe(
            name: "Slow Roast Lamb", servings: 6, preparationTime: "20 mins", cookingTime: "4 hrs 30 mins",
            ingredients: "lamb shoulder: 2 kg\ngarlic: 1 head\nrosemary: 3 sprigs",
            method:
                "Stud the lamb with garlic and rosemary.\nRoast covered at 150 °C.\nRest for 20 minutes before carving."
        ),
    ]

    /// The starter recipes version 4 seeds on first launch; "Tomato Soup" is also a legacy recipe,
    /// so seeding must merge it rather than duplicate it.
    public static let starterRecipes: [StarterRecipe] = [
        StarterRecipe(
            uid: "tomato-soup", title: "Tomato Soup", servings: 4, preparationTime: 15, cookingTime: 30,
            ingredients: [
                .init(name: "tomatoes", quantity: "1 kg"), .init(name: "onion", quantity: "1"),
                .init(name: "vegetable stock", quantity: "500 ml"), .init(name: "butter", quantity: "20 g"),
            ],
            steps: [
                "Chop the onion and the tomatoes.", "Soften the onion in the butter.",
                "Add the tomatoes and the stock.", "Simmer for 25 minutes, then blend.",
            ]),
        StarterRecipe(
            uid: "lemon-tart", title: "Lemon Tart", servings: 8, preparationTime: 40, cookingTime: 35,
            ingredients: [
                .init(name: "sweet pastry", quantity: "300 g"), .init(name: "lemons", quantity: "4"),
                .init(name: "eggs", quantity: "5"), .init(name: "sugar", quantity: "150 g"),
                .init(name: "double cream", quantity: "150 ml"),
            ],
            steps: [
                "Line a tart tin with the pastry and bake it blind.", "Whisk the eggs, sugar, lemon juice and zest.",
                "Stir in the cream.", "Pour into the case and bake at 150 °C until just set.",
            ]),
        StarterRecipe(
            uid: "green-salad", title: "Green Salad", servings: 2, preparationTime: 10, cookingTime: 0,
            ingredients: [
                .init(name: "lettuce", quantity: "1 head"), .init(name: "olive oil", quantity: "3 tbsp"),
                .init(name: "vinegar", quantity: "1 tbsp"),
            ],
            steps: ["Wash and dry the leaves.", "Whisk the oil and vinegar.", "Toss just before serving."]),
    ]
}
